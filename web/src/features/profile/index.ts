/** The profile feature's public surface (its page is in routes.ts). */
export { useProfileUpdates } from './hooks/use-profile-updates';
