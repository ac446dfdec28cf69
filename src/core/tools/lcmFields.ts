import { z } from 'zod';

/** The conversation scoping every lcm tool shares, described once so each tells the model the same thing. */
export const conversationIdField = z
  .number()
  .int()
  .min(1)
  .describe('The conversationId lcm_grep reports (one per imported session, stable). Default: the current conversation. Wins over allConversations.');

export const allConversationsField = z.boolean().describe('true: every imported conversation instead of the current one. Default false.');
