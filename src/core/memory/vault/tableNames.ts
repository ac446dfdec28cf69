/** The memory keyword index; a leaf module so the schema and the vault helpers can share it without a cycle. */
export const MEMORY_FTS_TABLE = 'memory_fts';
