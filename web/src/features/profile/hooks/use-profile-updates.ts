import { useEffect } from 'react';
import { useAuthStore } from '@/features/auth';
import { chatSocket } from '@/lib/socket';

/**
 * `profile.updated` (docs/protocol.md): the name or picture changed in another tab or
 * device. Keeps the signed-in user's name and picture in step while mounted.
 */
export function useProfileUpdates(): void {
  useEffect(
    () =>
      chatSocket.on('profile.updated', ({ user }) => {
        useAuthStore.getState().updateUser({ name: user.name, profileImage: user.profileImage });
      }),
    [],
  );
}
