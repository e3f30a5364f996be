/** The profile feature's public surface (its page is in routes.ts; its frames are the auth store's). */
export {};
