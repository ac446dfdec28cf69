import { z } from 'zod';

/** Argument shapes several tools share, described once so every tool tells the model the same thing. */
export const scopeField = z
  .string()
  .max(110)
  .describe('"global" (default) or "project:<slug>" to keep a memory with one project.');

export const sourceField = z
  .string()
  .min(1)
  .max(100)
  .describe('The app or agent saving this (e.g. "claude-code"). Default: the connecting client.');

export const citesField = z
  .array(z.string().min(1).max(500))
  .max(20)
  .describe('What this save builds on: note paths, memory ids or subjects a read returned.');
