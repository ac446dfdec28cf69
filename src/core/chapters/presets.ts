/**
 * How much room the next session's first message (table of contents + handoff note) may take,
 * and how large one chapter should be. A preset is chosen per call; a window-aware ratio
 * would need the model's context size, which no surface here reports reliably.
 */
export const PRESETS = {
  compact: { budgetTokens: 2_000, chapterTargetTokens: 6_000 },
  standard: { budgetTokens: 4_000, chapterTargetTokens: 12_000 },
  generous: { budgetTokens: 8_000, chapterTargetTokens: 24_000 },
} as const;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as [PresetName, ...PresetName[]];
export const DEFAULT_PRESET: PresetName = 'standard';

export interface PresetUsed {
  name: PresetName;
  budgetTokens: number;
  chapterTargetTokens: number;
  /** True when the call set budgetTokens itself. */
  budgetOverridden: boolean;
}

export function resolvePreset(name: PresetName | undefined, budgetTokens?: number): PresetUsed {
  const chosen = name ?? DEFAULT_PRESET;
  const p = PRESETS[chosen];
  return {
    name: chosen,
    budgetTokens: budgetTokens ?? p.budgetTokens,
    chapterTargetTokens: p.chapterTargetTokens,
    budgetOverridden: budgetTokens !== undefined,
  };
}
