import { useEffect } from 'react';
import { useAuthStore } from '@/features/auth';
import { chatSocket } from '@/lib/socket';
import type { SocketEventType } from '@/lib/socket-protocol';
import type { User } from '@/types/api';

/**
 * `profile.updated` (docs/protocol.md): the name or picture changed in another tab or
 * device. src/lib/socket-protocol.ts does not list this frame yet; the socket delivers
 * every frame type to its listeners all the same, so the type is widened here.
 */
const PROFILE_UPDATED = 'profile.updated' as unknown as SocketEventType;

function profileFrom(payload: unknown): Partial<User> | null {
  if (typeof payload !== 'object' || payload === null || !('user' in payload)) return null;
  const user = payload.user;
  if (typeof user !== 'object' || user === null) return null;
  const { name, profileImage } = user as Partial<User>;
  const changes: Partial<User> = {};
  if (typeof name === 'string') changes.name = name;
  if (typeof profileImage === 'string' || profileImage === null) changes.profileImage = profileImage;
  return changes;
}

/** Keeps the signed-in user's name and picture in step with other tabs while mounted. */
export function useProfileUpdates(): void {
  useEffect(
    () =>
      chatSocket.on(PROFILE_UPDATED, (payload) => {
        const changes = profileFrom(payload);
        if (changes) useAuthStore.getState().updateUser(changes);
      }),
    [],
  );
}
