import { cleanup, render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it } from 'vitest';
import { i18n } from '@/lib/i18n';
import type { ChatError } from '../stores/chat';
import { ChatErrorNotice } from './composer-notices';

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
});

function show(error: ChatError) {
  cleanup();
  render(
    <MemoryRouter>
      <ChatErrorNotice id="e" error={error} onDismiss={() => undefined} />
    </MemoryRouter>,
  );
  return screen.getByTestId('chat-error');
}

describe('a refused send', () => {
  it('says what the server said', () => {
    expect(show({ code: 'limit_reached', message: 'You have reached your daily message limit.' }).textContent).toContain(
      'You have reached your daily message limit.',
    );
  });

  it('without the server’s words, says the server’s text of its code, or the generic one', () => {
    expect(show({ code: 'generation_in_progress' }).textContent).toContain('An answer is still being written in this conversation');
    // "{field} is a premium feature": the frame names the field, not how to call it.
    expect(show({ code: 'premium_required', field: 'webSearch' }).textContent).toContain('An error occurred');
  });

  it('of the client’s own says it in the interface language', async () => {
    await i18n.changeLanguage('hu-HU');
    expect(show({ code: 'offline' }).textContent).toContain(i18n.t('chat:errors.offline'));
    expect(i18n.t('chat:errors.offline')).not.toBe(i18n.t('chat:errors.offline', { lng: 'en-US' }));
  });
});
