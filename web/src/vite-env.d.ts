/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Opt-in integration test: base URL of a running chat-server, e.g. http://127.0.0.1:18080 */
  readonly CHAT_SERVER_URL?: string;
  /** Opt-in integration test: that server's log file, where the log mail transport writes codes. */
  readonly CHAT_SERVER_LOG?: string;
}
