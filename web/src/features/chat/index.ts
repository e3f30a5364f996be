/** The chat feature's public surface (nothing shared yet; its page is in routes.ts). */
export {};
