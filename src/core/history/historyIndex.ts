import { createFtsTableSql } from '../search/ftsSearch';

export const HISTORY_FTS = 'history_fts';

/**
 * What history_fts holds for each indexed event, read from the events themselves: history_fts is
 * an FTS4 external-content table over this view, so an event's text is stored once, in its row,
 * not again as the index's body. The event row keeps what cannot be derived from it: its index
 * terms (the analyzer runs in JavaScript; NULL for an event that is not indexed) and, for an
 * event without a time of its own, the time it was indexed at (`indexed_at`, the session's last
 * update or the operation's time then). `rowid` is what FTS4 reads a row by; `docid` is what
 * the readers of stored columns join on (contentColumns.ts).
 *
 * FTS4 reads an entry's old terms from here when it deletes one, so every writer deletes an
 * event's entry before it changes or deletes the event (sessionApply.ts, forgetOps.ts).
 */
export const HISTORY_INDEXED = 'history_indexed';

const INDEXED_VIEW = `
  CREATE VIEW ${HISTORY_INDEXED} AS
  SELECT e.id AS rowid, e.id AS docid, e.terms AS terms,
    CASE WHEN coalesce(e.tool_name, '') = '' THEN e.text ELSE e.tool_name || ' ' || e.text END AS body,
    coalesce(e.created_at, e.indexed_at) AS created_at, (SELECT source FROM sessions WHERE id = e.session_id) AS scope,
    e.session_id AS session_id, e.kind AS kind
  FROM events AS e
  WHERE e.terms IS NOT NULL;
`;

/**
 * Moves a store's history_fts from its own content table to the events (the layout above): the
 * terms and fallback times it held go to the events, the index is built anew from them.
 */
export const EXTERNAL_CONTENT_MIGRATION = `
  ALTER TABLE events ADD COLUMN indexed_at INTEGER;
  ALTER TABLE events ADD COLUMN terms TEXT;
  UPDATE events SET terms = f.terms, indexed_at = CASE WHEN events.created_at IS NULL THEN f.created_at END
    FROM (SELECT docid, terms, created_at FROM ${HISTORY_FTS}) AS f WHERE f.docid = events.id;
  DROP TABLE ${HISTORY_FTS};
  ${INDEXED_VIEW}
  ${createFtsTableSql(HISTORY_FTS, ['session_id', 'kind'], HISTORY_INDEXED)}
  INSERT INTO ${HISTORY_FTS}(${HISTORY_FTS}) VALUES ('rebuild');
`;
