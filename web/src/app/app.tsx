import { I18nextProvider } from 'react-i18next';
import { createBrowserRouter } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { i18n } from '@/lib/i18n';
import { setNavigate } from '@/lib/navigation';
import { routes } from './routes';

const router = createBrowserRouter(routes);
// A notification's click opens its conversation without a page load.
setNavigate((path) => void router.navigate(path));

export function App() {
  return (
    <I18nextProvider i18n={i18n}>
      <RouterProvider router={router} />
    </I18nextProvider>
  );
}
