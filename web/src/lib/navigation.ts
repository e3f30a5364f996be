/**
 * Client-side navigation for code outside React (a notification's click). The app
 * registers its router's `navigate` at start-up; before that, a full page load does.
 */
let navigateImpl: (path: string) => void = (path) => window.location.assign(path);

export function setNavigate(navigate: (path: string) => void): void {
  navigateImpl = navigate;
}

export function navigateTo(path: string): void {
  navigateImpl(path);
}
