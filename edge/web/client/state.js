// Foya web: the page's state. The field lists of the queries and the
// session prefetched at load live in boot.js (window.foyaBoot) and are
// passed on from here.
export const { ATT_FIELDS, HISTORY_PAGE, MSG_FIELDS, S_FIELDS, SESSION_Q, TEXT_PAGE, takePrefetched } = window.foyaBoot;

export const state = { session: null, lastSeq: 0, sessions: new Map(), live: null, sub: null, phase: 'IDLE', queue: [], attachments: [], editing: null, gen: 0 };
