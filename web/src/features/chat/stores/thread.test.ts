import { describe, expect, it } from 'vitest';
import { answer, CONVERSATION_ID, storedDocument, storedFile, userMessage } from '../test/fixtures';
import {
  applyCompleted,
  applyCreated,
  applyDelta,
  applyRest,
  applySnapshot,
  EMPTY_THREAD,
  forgetStreamPositions,
  streamingMessage,
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
