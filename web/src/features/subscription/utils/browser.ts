/** Leaving the app for the payment provider's page; an object so tests can replace it. */
export const browser = {
  assign(url: string): void {
    window.location.assign(url);
  },
};
