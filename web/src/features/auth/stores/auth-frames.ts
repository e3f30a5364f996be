/**
 * The frames about the session and the signed-in user, for the app's socket router: the
 * user and settings with every `ready`, a change of settings or profile made in any tab or
 * device (the header's name and avatar follow on every page), and the end of the session.
 */
import type { SliceFrames } from '@/lib/socket-protocol';
import { useAuthStore } from './auth-store';

const auth = () => useAuthStore.getState();

export const authFrames: SliceFrames<'ready' | 'settings.updated' | 'profile.updated' | 'session.ended'> = {
  ready: ({ user }) => {
    auth().updateUser(user);
    auth().applySettings(user.settings);
  },
  'settings.updated': ({ settings }) => auth().applySettings(settings),
  'profile.updated': ({ user }) => auth().updateUser({ name: user.name, profileImage: user.profileImage }),
  'session.ended': ({ reason }) => auth().endSession(reason),
};
