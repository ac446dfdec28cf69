/** Every refusal has this one shape: why, and where a limit was involved, the measured numbers. */
export interface Refusal {
  ok: false;
  reason: string;
  budget?: Budget;
}

export interface Budget {
  limit: number;
  used: number;
  unit: 'characters' | 'tokens' | 'items' | 'bytes' | 'requests';
}

export function refuse(reason: string, budget?: Budget): Refusal {
  return budget ? { ok: false, reason, budget } : { ok: false, reason };
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}
