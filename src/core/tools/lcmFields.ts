import { z } from 'zod';

/** The conversation scoping every lcm tool shares, described once so each tells the model the same thing. */
export const conversationIdField = z
  .number()
  .int()
  .min(1)
  .describe('The conversation to use: the number lcm_grep reports as conversationId (an imported session; the number stays the same for that session). Default: the current conversation. Wins over allConversations.');

export const allConversationsField = z.boolean().describe('true: every imported conversation instead of the current one. Default false.');
