import * as fs from 'node:fs';

/** Peak memory of this process: sampled on a timer and on demand, plus the kernel's own high-water mark. */
export class MemorySampler {
  peakRss = 0;
  peakHeapUsed = 0;
  /** Buffers and ArrayBuffers outside the JS heap: sql.js's wasm memory lives here. */
  peakArrayBuffers = 0;
  samples = 0;
  private timer: NodeJS.Timeout | undefined;

  start(everyMs = 50): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.sample();
  }

  sample(): void {
    const m = process.memoryUsage();
    this.samples++;
    this.peakRss = Math.max(this.peakRss, m.rss);
    this.peakHeapUsed = Math.max(this.peakHeapUsed, m.heapUsed);
    this.peakArrayBuffers = Math.max(this.peakArrayBuffers, m.arrayBuffers);
  }
}

/** VmHWM: the peak resident set the kernel saw for this process (Linux), in bytes. */
export function kernelPeakRss(): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
