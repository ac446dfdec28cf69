import type { PoolStatus } from '../core/pool/poolClient';

/** The team pool's state as the status bar shows it: connected, offline, or behind by N operations. */
export function poolBadge(s: PoolStatus): { text: string; tooltip: string } {
  switch (s.state) {
    case 'connected':
      return { text: `$(cloud) ${s.team}`, tooltip: `Team pool "${s.team}": connected, up to date${s.unpushed ? ` (${s.unpushed} operations to push)` : ''}` };
    case 'behind':
      return { text: `$(cloud-download) ${s.team}: behind by ${s.behind}`, tooltip: `Team pool "${s.team}": behind by ${s.behind} operations, pulling` };
    case 'offline':
      return { text: `$(cloud-offline) ${s.team}: offline`, tooltip: `Team pool "${s.team}": offline, this machine's store answers; ${s.reason ?? ''}` };
    case 'refused':
      return { text: `$(error) ${s.team}: refused`, tooltip: `Team pool "${s.team}": ${s.reason ?? 'refused'}` };
    default:
      return { text: `$(cloud) ${s.team}: ${s.state}`, tooltip: `Team pool "${s.team}": ${s.state}` };
  }
}
