/** The subscription feature's public surface (nothing shared yet; its pages are in routes.ts). */
export {};
