import { z } from 'zod';

/** Argument shapes several tools share, described once so every tool tells the model the same thing. */
export const scopeField = z
  .string()
  .max(110)
  .describe('Memory scope: "global" (the default) or "project:<slug>". Keeps a memory with one project.');

export const sourceField = z
  .string()
  .min(1)
  .max(100)
  .describe('Name of the app or agent saving this, for example "claude-code". Defaults to the connecting client.');

export const citesField = z
  .array(z.string().min(1).max(500))
  .max(20)
  .describe('What this save builds on: a note path, memory id or subject that a read returned (up to 20).');
