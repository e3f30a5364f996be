import { useAuthDialogStore } from '../stores/auth-dialog-store';
import { useAuthStore } from '../stores/auth-store';
import { ForgotPasswordDialog } from './forgot-password-dialog';
import { LoginDialog } from './login-dialog';
import { RegisterDialog } from './register-dialog';
import { ResetPasswordDialog } from './reset-password-dialog';
import { VerifyEmailDialog } from './verify-email-dialog';

/** Hosts the account dialog that is open; mounted once inside the router. */
export function AuthDialogs() {
  const dialog = useAuthDialogStore((s) => s.dialog);
  const close = useAuthDialogStore((s) => s.close);
  const status = useAuthStore((s) => s.status);
  const registration = useAuthStore((s) => s.registration);
  const passwordReset = useAuthStore((s) => s.passwordReset);

  // These dialogs are for getting a session; a signed-in tab has no use for them.
  if (!dialog || status === 'authenticated') return null;

  switch (dialog) {
    case 'login':
      return <LoginDialog onClose={close} />;
    case 'register':
      return <RegisterDialog onClose={close} />;
    case 'verify':
      // The pending registration lives in memory only; after a reload, start again.
      return registration ? (
        <VerifyEmailDialog email={registration.email} onClose={close} />
      ) : (
        <RegisterDialog onClose={close} />
      );
    case 'forgot':
      return <ForgotPasswordDialog onClose={close} />;
    case 'reset':
      return passwordReset ? (
        <ResetPasswordDialog
          email={passwordReset.email}
          codeVerified={passwordReset.verified}
          onClose={close}
        />
      ) : (
        <ForgotPasswordDialog onClose={close} />
      );
  }
}
