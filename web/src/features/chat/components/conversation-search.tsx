import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { CloseIcon } from '@/components/icons';
import { Spinner } from '@/components/spinner';
import { errorMessage } from '@/lib/api-client';
import { MAX_SEARCH_QUERY_CHARS, type SearchHit } from '@/types/generated';
import { chatApi } from '../api/chat-api';
import { splitHighlights } from '../lib/highlight';
import { useChatStore } from '../stores/chat';
import { SearchIcon } from './chat-icons';
import styles from './conversation-search.module.css';

/** Typing pauses this long before a search goes out (search as you type). */
export const SEARCH_DEBOUNCE_MS = 250;
/** docs/api.md: a longer query is refused; the field stops there. */

interface Results {
  query: string;
  hits: SearchHit[];
  nextCursor: string | null;
}

/** The latest answer, for the query it answered: hits, or the error's text. */
type Answer = Results | { query: string; error: string };

/**
 * The sidebar's search over the user's conversations (titles and every message of every
 * branch, archived ones too): a combobox whose hits replace the list while it has a query.
 * Ctrl/⌘+K focuses it from anywhere on the chat page; arrows move through the hits, Enter
 * opens one on its message's branch, Escape clears.
 */
export function ConversationSearch({ onSearchingChange }: { onSearchingChange: (searching: boolean) => void }) {
  const { t } = useTranslation('chat');
  const navigate = useNavigate();
  const listId = useId();
  const inputRef = useRef<HTMLInputElement>(null);
  const [query, setQuery] = useState('');
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [active, setActive] = useState(-1);
  const [loadingMore, setLoadingMore] = useState(false);
  const trimmed = query.trim();
  const searching = trimmed !== '';

  useEffect(() => onSearchingChange(searching), [searching, onSearchingChange]);

  // Ctrl+K (⌘K on a Mac) as in other chat apps; the browser's own use of it gives way.
  useEffect(() => {
    const onKeyDown = (event: globalThis.KeyboardEvent) => {
      if (event.key.toLowerCase() !== 'k' || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
      const input = inputRef.current;
      if (!input || input.closest('[inert]')) return;
      event.preventDefault();
      input.focus();
      input.select();
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);

  // Debounced; an answer to an older query is dropped (aborted).
  useEffect(() => {
    if (!trimmed) return;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      chatApi
        .searchConversations(trimmed, null, controller.signal)
        .then((page) => {
          setAnswer({ query: trimmed, hits: page.data, nextCursor: page.nextCursor });
          setActive(-1);
        })
        .catch((error: unknown) => {
          if (controller.signal.aborted) return;
          setAnswer({ query: trimmed, error: errorMessage(error) ?? t('find.failed') });
        });
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [trimmed, t]);

  // While the next answer comes, the previous hits stay, so the list does not flicker.
  const loading = searching && answer?.query !== trimmed;
  const results = answer && 'hits' in answer ? answer : null;
  const error = answer && 'error' in answer && !loading ? answer.error : null;
  const ready = searching && !loading && results !== null;
  const hits = searching ? (results?.hits ?? []) : [];

  const loadMore = async () => {
    if (!results?.nextCursor || loadingMore) return;
    setLoadingMore(true);
    try {
      const page = await chatApi.searchConversations(results.query, results.nextCursor);
      setAnswer((a) =>
        a && 'hits' in a && a.query === results.query ? { ...a, hits: [...a.hits, ...page.data], nextCursor: page.nextCursor } : a,
      );
    } catch {
      // The button stays to try again; the api-client toasted a server or network error.
    } finally {
      setLoadingMore(false);
    }
  };

  const open = (hit: SearchHit) => {
    if (hit.messageId) useChatStore.getState().showFound(hit.conversationId, hit.messageId);
    setQuery('');
    void navigate(`/chat/${hit.conversationId}`);
  };

  const clear = () => {
    setQuery('');
    inputRef.current?.focus();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    const count = hits.length;
    switch (event.key) {
      case 'ArrowDown':
        if (count) setActive((i) => (i + 1) % count);
        break;
      case 'ArrowUp':
        if (count) setActive((i) => (i <= 0 ? count - 1 : i - 1));
        break;
      case 'Enter': {
        const hit = hits[active] ?? (count === 1 ? hits[0] : undefined);
        if (!hit) return;
        open(hit);
        break;
      }
      case 'Escape':
        if (!query) return;
        setQuery('');
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  // The active hit stays in view while the arrows move.
  useEffect(() => {
    if (active < 0) return;
    document.getElementById(`${listId}-${active}`)?.scrollIntoView({ block: 'nearest' });
  }, [active, listId]);

  const expanded = searching && hits.length > 0;

  return (
    <div className={styles.search} role="search">
      <div className={styles.field}>
        <SearchIcon width={16} height={16} className={styles.icon} aria-hidden="true" />
        <input
          ref={inputRef}
          type="text"
          className={styles.input}
          value={query}
          maxLength={MAX_SEARCH_QUERY_CHARS}
          placeholder={t('find.placeholder')}
          aria-label={t('find.label')}
          aria-keyshortcuts="Control+K Meta+K"
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={expanded}
          aria-controls={expanded ? listId : undefined}
          aria-activedescendant={expanded && active >= 0 ? `${listId}-${active}` : undefined}
          autoComplete="off"
          spellCheck={false}
          data-testid="conversation-search"
          onChange={(event) => setQuery(event.target.value)}
          onKeyDown={onKeyDown}
        />
        {query ? (
          <Button variant="ghost" size="small" iconOnly aria-label={t('find.clear')} className={styles.clear} onClick={clear}>
            <CloseIcon width={14} height={14} />
          </Button>
        ) : (
          <kbd className={styles.shortcut} aria-hidden="true">
            {isMac() ? '⌘K' : 'Ctrl K'}
          </kbd>
        )}
      </div>

      {searching && (
        <div className={styles.results} data-testid="search-results">
          <p className="visually-hidden" role="status">
            {ready ? t('find.count', { count: hits.length }) : ''}
          </p>
          {loading && hits.length === 0 && (
            <div className={styles.state}>
              <Spinner size="small" label={t('find.searching')} />
            </div>
          )}
          {error && (
            <p className={styles.error} role="alert">
              {error}
            </p>
          )}
          {ready && hits.length === 0 && (
            <p className={styles.state} data-testid="search-empty">
              {t('find.none', { query: trimmed })}
            </p>
          )}
          <ul id={listId} role="listbox" aria-label={t('find.results')} className={styles.list} aria-busy={loading || undefined}>
            {hits.map((hit, index) => (
              <HitOption
                key={`${hit.conversationId}-${hit.messageId ?? 'title'}`}
                id={`${listId}-${index}`}
                hit={hit}
                active={index === active}
                onChoose={() => open(hit)}
                onHover={() => setActive(index)}
              />
            ))}
          </ul>
          {results?.nextCursor && ready && (
            <Button variant="secondary" size="small" block loading={loadingMore} onClick={() => void loadMore()}>
              {t('find.more')}
            </Button>
          )}
        </div>
      )}
    </div>
  );
}

function HitOption({
  id,
  hit,
  active,
  onChoose,
  onHover,
}: {
  id: string;
  hit: SearchHit;
  active: boolean;
  onChoose: () => void;
  onHover: () => void;
}) {
  const { t } = useTranslation('chat');
  const title = hit.title ?? t('untitled');
  const titleHit = hit.messageId === null;
  return (
    // The input keeps the focus (aria-activedescendant); a press picks the hit without
    // taking the focus first, so the list does not close under the pointer.
    <li
      id={id}
      role="option"
      aria-selected={active}
      className={styles.hit}
      data-testid="search-hit"
      data-conversation-id={hit.conversationId}
      data-message-id={hit.messageId ?? undefined}
      onMouseDown={(event) => event.preventDefault()}
      onMouseMove={onHover}
      onClick={onChoose}
    >
      <span className={styles.hitTitle}>
        {/* One inline run: the marked parts are not flex items of their own. */}
        <span className={styles.hitTitleText}>{titleHit ? <Marked text={hit.snippet} hit={hit} /> : title}</span>
        {hit.archived && <span className={styles.badge}>{t('find.archived')}</span>}
      </span>
      {!titleHit && (
        <span className={styles.snippet}>
          <Marked text={hit.snippet} hit={hit} />
        </span>
      )}
    </li>
  );
}

function Marked({ text, hit }: { text: string; hit: SearchHit }) {
  return (
    <>
      {splitHighlights(text, hit.highlights).map((part, i) => (part.match ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>))}
    </>
  );
}

function isMac(): boolean {
  return typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}
