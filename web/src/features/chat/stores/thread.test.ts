import { describe, expect, it } from 'vitest';
import { answer, CONVERSATION_ID, storedDocument, storedFile, userMessage } from '@/test/chat-fixtures';
import {
  applyCompleted,
  applyCreated,
  applyDelta,
  applyFeedback,
  applyRest,
  applySnapshot,
  EMPTY_THREAD,
  forgetStreamPositions,
  newestBelow,
  pathTo,
  streamingMessage,
  versionIndex,
  visiblePath,
  type Thread,
} from './thread';

const ANSWER_ID = answer()._id;
const delta = (seq: number, text: string) => ({ messageId: ANSWER_ID, seq, delta: text });
const snapshot = (seq: number, content: string) => ({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq, content });
const contentOf = (thread: Thread) => thread.find((m) => m._id === ANSWER_ID)?.content;

/** A live answer: both message.created frames applied. */
function live(): Thread {
  return applyCreated(applyCreated(EMPTY_THREAD, userMessage()), answer());
}

describe('message.created', () => {
  it('adds the question and the streaming answer at seq 0, in order', () => {
    const thread = live();
    expect(thread.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(thread[1]).toMatchObject({ status: 'streaming', content: '', seq: 0, final: false });
  });

  it('keeps a user message’s images', () => {
    const withImage = applyCreated(EMPTY_THREAD, userMessage({ content: '', attachments: [storedFile()] }));
    expect(withImage[0]!.attachments).toEqual([storedFile()]);
  });

  it('is idempotent', () => {
    const thread = live();
    expect(applyCreated(thread, answer())).toBe(thread);
    expect(applyCreated(thread, userMessage())).toBe(thread);
  });

  it('starts an answer known only from REST at seq 0', () => {
    const thread = applyRest(EMPTY_THREAD, [userMessage(), answer()]);
    expect(thread[1]!.seq).toBeNull();
    const created = applyCreated(thread, answer());
    expect(created[1]!.seq).toBe(0);
  });

  it('keeps a snapshot that came first', () => {
    const thread = applySnapshot(EMPTY_THREAD, snapshot(3, 'abc'));
    const created = applyCreated(thread, answer());
    expect(created[0]).toMatchObject({ content: 'abc', seq: 3, model: 'gpt-4o-mini' });
    expect(created[0]!.stub).toBeUndefined();
  });
});

describe('message.delta', () => {
  it('appends deltas in seq order', () => {
    let thread = live();
    thread = applyDelta(thread, delta(1, 'Hel')).thread;
    thread = applyDelta(thread, delta(2, 'lo')).thread;
    expect(contentOf(thread)).toBe('Hello');
    expect(thread[1]!.seq).toBe(2);
  });

  it('ignores a duplicate or older delta', () => {
    let thread = live();
    thread = applyDelta(thread, delta(1, 'Hel')).thread;
    thread = applyDelta(thread, delta(2, 'lo')).thread;
    const again = applyDelta(thread, delta(2, 'lo'));
    expect(again).toEqual({ thread, gap: false });
    expect(applyDelta(thread, delta(1, 'Hel')).thread).toBe(thread);
    expect(contentOf(thread)).toBe('Hello');
  });

  it('reports a gap, forgets the position and ignores what follows until a snapshot', () => {
    let thread = live();
    thread = applyDelta(thread, delta(1, 'a')).thread;
    const gap = applyDelta(thread, delta(3, 'c'));
    expect(gap.gap).toBe(true);
    expect(contentOf(gap.thread)).toBe('a');
    expect(gap.thread[1]!.seq).toBeNull();
    // Later deltas are not applied on an unknown position (and raise no second gap).
    const after = applyDelta(gap.thread, delta(4, 'd'));
    expect(after).toEqual({ thread: gap.thread, gap: false });
    // The snapshot brings it back in step.
    thread = applySnapshot(after.thread, snapshot(4, 'abcd'));
    thread = applyDelta(thread, delta(5, 'e')).thread;
    expect(contentOf(thread)).toBe('abcde');
  });

  it('ignores deltas of an unknown message or one known from REST only', () => {
    expect(applyDelta(EMPTY_THREAD, delta(1, 'x'))).toEqual({ thread: EMPTY_THREAD, gap: false });
    const rest = applyRest(EMPTY_THREAD, [userMessage(), answer()]);
    expect(applyDelta(rest, delta(1, 'x'))).toEqual({ thread: rest, gap: false });
  });
});

describe('message.snapshot', () => {
  it('replaces the text and position, whatever the tab had', () => {
    let thread = live();
    thread = applyDelta(thread, delta(1, 'stale')).thread;
    thread = applySnapshot(thread, snapshot(5, 'the real text'));
    expect(thread[1]).toMatchObject({ content: 'the real text', seq: 5 });
    // Deltas the snapshot covers are dropped; the next one appends.
    thread = applyDelta(thread, delta(5, 'dup')).thread;
    thread = applyDelta(thread, delta(6, '!')).thread;
    expect(contentOf(thread)).toBe('the real text!');
  });

  it('gives a REST answer (seq unknown) its position', () => {
    let thread = applyRest(EMPTY_THREAD, [userMessage(), answer()]);
    thread = applySnapshot(thread, snapshot(0, ''));
    thread = applyDelta(thread, delta(1, 'Hi')).thread;
    expect(contentOf(thread)).toBe('Hi');
  });

  it('holds a snapshot of a message not loaded yet at the end, and REST fills it in', () => {
    let thread = applySnapshot(EMPTY_THREAD, snapshot(2, 'ab'));
    expect(thread[0]).toMatchObject({ stub: true, content: 'ab', seq: 2 });
    thread = applyRest(thread, [userMessage(), answer()]);
    expect(thread.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(thread[1]).toMatchObject({ content: 'ab', seq: 2, clientId: 'c1' });
    expect(thread[1]!.stub).toBeUndefined();
  });

  it('is ignored once the answer completed', () => {
    let thread = applyCompleted(live(), answer({ content: 'Done.', status: 'complete' }));
    thread = applySnapshot(thread, snapshot(1, 'D'));
    expect(contentOf(thread)).toBe('Done.');
  });
});

describe('message.completed', () => {
  it('replaces the assembled text with the stored message, finally', () => {
    let thread = live();
    thread = applyDelta(thread, delta(1, 'Don')).thread;
    thread = applyCompleted(thread, answer({ content: 'Done.', status: 'complete' }));
    expect(thread[1]).toMatchObject({ content: 'Done.', status: 'complete', final: true });
    expect(streamingMessage(thread)).toBeUndefined();
  });

  it('is final: later deltas, snapshots, created frames and REST copies change nothing', () => {
    const done = applyCompleted(live(), answer({ content: 'Stopped he', status: 'cancelled' }));
    expect(applyDelta(done, delta(1, 'x')).thread).toBe(done);
    expect(applySnapshot(done, snapshot(9, 'x'))).toBe(done);
    expect(applyCreated(done, answer())).toBe(done);
    expect(applyRest(done, [userMessage(), answer()])).toBe(done);
  });

  it('adds an answer the tab had not seen', () => {
    const thread = applyCompleted(applyCreated(EMPTY_THREAD, userMessage()), answer({ content: 'x', status: 'error' }));
    expect(thread.map((m) => m.status)).toEqual(['complete', 'error']);
  });

  it('brings the documents the answer drew on; none when a server leaves them out', () => {
    const sources = [{ fileId: 'd1', name: 'report.pdf', page: 3 }];
    expect(applyCompleted(live(), answer({ content: 'x', status: 'complete', sources }))[1]!.sources).toEqual(sources);
    expect(applyCompleted(live(), answer({ content: 'x', status: 'complete' }))[1]!.sources).toEqual([]);
  });
});

describe('REST copies', () => {
  it('carry an answer’s sources and a question’s documents', () => {
    const document = storedDocument({ status: 'ready', progress: 100 });
    const thread = applyRest(EMPTY_THREAD, [
      userMessage({ attachments: [document] }),
      answer({ content: 'x', status: 'complete', sources: [{ fileId: 'd1', name: 'report.pdf', page: null }] }),
    ]);
    expect(thread[0]!.attachments).toEqual([document]);
    expect(thread[1]!.sources).toEqual([{ fileId: 'd1', name: 'report.pdf', page: null }]);
  });

  it('never overwrite a live or snapshotted copy with "streaming, empty"', () => {
    let thread = applyDelta(live(), delta(1, 'Hi')).thread;
    expect(applyRest(thread, [userMessage(), answer()])).toBe(thread);
    thread = applySnapshot(thread, snapshot(4, 'Hi there'));
    expect(applyRest(thread, [userMessage(), answer()])).toBe(thread);
  });

  it('bring an answer that ended while the tab was away', () => {
    const thread = forgetStreamPositions(applyDelta(live(), delta(1, 'Hi')).thread);
    const loaded = applyRest(thread, [userMessage(), answer({ content: 'Hi there.', status: 'complete' })]);
    expect(loaded[1]).toMatchObject({ content: 'Hi there.', status: 'complete', final: true });
  });

  it('merge with messages the socket brought first, in creation order', () => {
    const later = userMessage({ _id: '01959b10-9999-7000-8000-000000000001', createdAt: '2025-03-14T10:20:00.000+00:00', content: 'Next' });
    const thread = applyCreated(EMPTY_THREAD, later);
    const loaded = applyRest(thread, [userMessage(), answer({ content: 'A', status: 'complete' })]);
    expect(loaded.map((m) => m.content)).toEqual(['Hello there', 'A', 'Next']);
  });
});

describe('a reconnect', () => {
  it('makes every streaming position unknown until a snapshot', () => {
    const thread = forgetStreamPositions(applyDelta(live(), delta(1, 'Hi')).thread);
    expect(thread[1]!.seq).toBeNull();
    expect(applyDelta(thread, delta(2, '!')).thread).toBe(thread);
    expect(forgetStreamPositions(thread)).toBe(thread);
  });
});

describe('versions (a conversation as a tree)', () => {
  // q1 → a1 → q2 → a2, then q2 edited (q2b → a2b), then a2b regenerated (a2c).
  const at = (n: number) => `2025-03-14T10:20:${String(n).padStart(2, '0')}.000+00:00`;
  const q1 = userMessage({ _id: 'q1', parentId: null, createdAt: at(1) });
  const a1 = answer({ _id: 'a1', parentId: 'q1', createdAt: at(2), status: 'complete', content: 'A1' });
  const q2 = userMessage({ _id: 'q2', parentId: 'a1', createdAt: at(3), content: 'Second' });
  const a2 = answer({ _id: 'a2', parentId: 'q2', createdAt: at(4), status: 'complete', content: 'A2' });
  const q2b = userMessage({ _id: 'q2b', parentId: 'a1', createdAt: at(5), content: 'Second, edited' });
  const a2b = answer({ _id: 'a2b', parentId: 'q2b', createdAt: at(6), status: 'complete', content: 'A2b' });
  const a2c = answer({ _id: 'a2c', parentId: 'q2b', createdAt: at(7), status: 'complete', content: 'A2c' });
  const tree = () => applyRest(EMPTY_THREAD, [q1, a1, q2, a2, q2b, a2b, a2c]);
  const ids = (messages: readonly { _id: string }[]) => messages.map((m) => m._id);

  it('shows the branch of the current message, from the first question', () => {
    expect(ids(visiblePath(tree(), 'a2c'))).toEqual(['q1', 'a1', 'q2b', 'a2c']);
    expect(ids(visiblePath(tree(), 'a2'))).toEqual(['q1', 'a1', 'q2', 'a2']);
    expect(ids(visiblePath(tree(), 'a1'))).toEqual(['q1', 'a1']);
  });

  it('shows the newest message’s branch while the current one is unknown or not loaded', () => {
    expect(ids(visiblePath(tree(), null))).toEqual(['q1', 'a1', 'q2b', 'a2c']);
    expect(ids(visiblePath(tree(), 'not-loaded'))).toEqual(['q1', 'a1', 'q2b', 'a2c']);
    expect(visiblePath(EMPTY_THREAD, null)).toEqual([]);
    expect(pathTo(tree(), null)).toEqual([]);
    expect(pathTo(tree(), 'not-loaded')).toBeNull();
  });

  it('does not hang on a loop', () => {
    const loop = applyRest(EMPTY_THREAD, [userMessage({ _id: 'x', parentId: 'y' }), answer({ _id: 'y', parentId: 'x', status: 'complete' })]);
    expect(ids(pathTo(loop, 'y')!)).toEqual(['x', 'y']);
  });

  it('numbers each message among the messages of its parent, oldest first', () => {
    const versions = versionIndex(tree());
    expect(versions.get('q2')).toEqual({ index: 1, count: 2, previous: null, next: 'q2b' });
    expect(versions.get('q2b')).toEqual({ index: 2, count: 2, previous: 'q2', next: null });
    expect(versions.get('a2b')).toMatchObject({ index: 1, count: 2, next: 'a2c' });
    expect(versions.get('a2c')).toMatchObject({ index: 2, count: 2, previous: 'a2b' });
    expect(versions.get('a2')).toMatchObject({ index: 1, count: 1 });
    expect(versions.get('q1')).toMatchObject({ index: 1, count: 1 });
  });

  it('leaves a snapshot’s stub out of the versions (its parent is not known yet)', () => {
    const thread = applySnapshot(applyRest(EMPTY_THREAD, [q1]), { conversationId: CONVERSATION_ID, messageId: 'late', seq: 1, content: 'x' });
    expect(versionIndex(thread).get('q1')).toMatchObject({ index: 1, count: 1 });
    expect(versionIndex(thread).has('late')).toBe(false);
  });

  it('switches to the newest message below a version, as the server does', () => {
    expect(newestBelow(tree(), 'q2')).toBe('a2');
    expect(newestBelow(tree(), 'q2b')).toBe('a2c');
    expect(newestBelow(tree(), 'a2b')).toBe('a2b');
    expect(newestBelow(tree(), 'a1')).toBe('a2c');
    expect(newestBelow(tree(), 'unknown')).toBe('unknown');
  });

  it('keeps a message’s parent and feedback through created, completed and REST copies', () => {
    let thread = applyCreated(applyRest(EMPTY_THREAD, [q1, a1, q2b]), answer({ _id: 'a9', parentId: 'q2b', createdAt: at(9) }));
    expect(thread.find((m) => m._id === 'a9')!.parentId).toBe('q2b');
    thread = applyCompleted(thread, answer({ _id: 'a9', parentId: 'q2b', createdAt: at(9), status: 'complete', content: 'x' }));
    expect(ids(visiblePath(thread, 'a9'))).toEqual(['q1', 'a1', 'q2b', 'a9']);
  });

  it('applies feedback, and REST brings a rating given while the tab was away', () => {
    const thread = tree();
    const rated = applyFeedback(thread, 'a1', { rating: 'down', comment: 'Too short' });
    expect(rated.find((m) => m._id === 'a1')!.feedback).toEqual({ rating: 'down', comment: 'Too short' });
    expect(applyFeedback(rated, 'a1', { rating: 'down', comment: 'Too short' })).toBe(rated);
    expect(applyFeedback(rated, 'unknown', null)).toBe(rated);
    // a1 is final: REST changes nothing of it but its feedback.
    const reloaded = applyRest(rated, [{ ...a1, feedback: { rating: 'up', comment: null } }]);
    expect(reloaded.find((m) => m._id === 'a1')!.feedback).toEqual({ rating: 'up', comment: null });
    expect(applyRest(reloaded, [{ ...a1, feedback: { rating: 'up', comment: null } }])).toBe(reloaded);
  });
});
