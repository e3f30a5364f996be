/** Pages every visitor sees first: loaded eagerly. The privacy policy is in routes.ts. */
export { LandingPage } from './components/landing-page';
export { NotFoundPage } from './components/not-found-page';
