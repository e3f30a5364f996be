/**
 * Shapes the server sends (docs/api.md, docs/protocol.md, actors/src/protocol.rs) that more
 * than one feature reads. A feature's own request and response shapes live in its api/.
 */
import type { Language } from '@/lib/i18n';

export interface AiPersonalization {
  enabled: boolean;
  /** How the AI addresses the user. */
  userName: string;
  /** Free text about the user. */
  userInfo: string;
}

/** Settings kept by the server; theme, font size and notifications stay in the browser. */
export interface UserSettings {
  language: Language;
  aiPersonalization: AiPersonalization;
}

export interface User {
  _id: string;
  name: string;
  email: string;
  /** A path under /uploads, or null. */
  profileImage: string | null;
  settings: UserSettings;
  /** Absent in the websocket `ready` frame. */
  createdAt?: string;
}

export type BillingType = 'private' | 'company';

export interface BillingInfo {
  billingType: BillingType;
  name: string;
  companyName: string | null;
  address: string;
  city: string;
  postalCode: string;
  country: string;
  vatNumber: string | null;
}

export type PlanType = 'free' | 'base' | 'plus' | 'pro';

export interface UsageCounter {
  limit: number | null;
  used: number;
  remaining: number | null;
  unlimited: boolean;
  resetsAt: string;
}

export interface UsageService {
  daily: UsageCounter;
  monthly: UsageCounter;
}

export interface LimitInfo {
  limitType: PlanType;
  startDate: string;
  endDate: string;
  monthStartDate: string;
  monthEndDate: string;
  timezone: string;
  services: {
    responses: UsageService;
    searches: UsageService;
    images: UsageService;
  };
}

export interface Usage {
  hasActiveLimit: boolean;
  limitInfo: LimitInfo;
}

export interface Conversation {
  _id: string;
  title: string | null;
  model: string;
  webSearch: boolean;
  /** The project it is in; null (or missing, from a server before projects) when none. */
  projectId?: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * A folder of conversations with its own instructions and documents (docs/api.md
 * "Projects"): every answer in one of its conversations follows the instructions and
 * reads the documents.
 */
export interface Project {
  _id: string;
  name: string;
  /** Lines kept; "" when none. */
  instructions: string;
  /** How many conversations it holds. */
  conversations: number;
  createdAt: string;
  /** Changes with the name and instructions only (not with its conversations or documents). */
  updatedAt: string;
}

export type MessageRole = 'user' | 'assistant';
export type MessageStatus = 'complete' | 'streaming' | 'cancelled' | 'error';

export type FileKind = 'image' | 'document';

/**
 * A document is read on the server after its upload (text, chunks, embeddings):
 * `processing` until `file.updated` says `ready` or `failed`. Images are always `ready`.
 */
export type FileStatus = 'ready' | 'processing' | 'failed';

/**
 * A file the user uploaded (`POST /api/files`). An image is re-encoded, EXIF stripped,
 * the long edge at most 2048 px; a document (PDF, DOCX, TXT, Markdown, CSV) is kept as it
 * was uploaded. `url` and `thumbnailUrl` are served to its owner only, authenticated by
 * the `token` cookie, so a plain `<img src>` or link works.
 */
export interface StoredFile {
  _id: string;
  kind: FileKind;
  /** The name it was uploaded with. */
  name: string;
  /** `image/jpeg` or `image/png` for images; the document's own type otherwise. */
  mime: string;
  /** Bytes stored. */
  size: number;
  /** An image's size in pixels; null for documents. */
  width: number | null;
  height: number | null;
  /** `/api/files/{id}`: the file itself. */
  url: string;
  /** `/api/files/{id}/thumbnail`: a JPEG that fits 256 × 256; null for documents. */
  thumbnailUrl: string | null;
  createdAt: string;
  status: FileStatus;
  /** How far a document's processing is, 0..100; 100 once ready. */
  progress: number;
  /** A PDF's page count; null otherwise. */
  pages: number | null;
}

/** A document passage an answer drew on (`message.sources`). */
export interface DocumentSource {
  fileId: string;
  name: string;
  /** The PDF page the passage starts on; null for formats without pages. */
  page: number | null;
}

/** A web page a web search found and the answer drew on (`message.sources`). */
export interface WebSource {
  url: string;
  title: string;
  /** The page's site (its host), as the server names it. */
  site: string;
}

/**
 * What an answer drew on. Its place in `message.sources` is its citation number: the
 * answer's text cites the first as `[1]`.
 */
export type MessageSource = DocumentSource | WebSource;

export interface Message {
  _id: string;
  conversationId: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  model: string | null;
  clientId: string | null;
  createdAt: string;
  /** The images and documents sent with a user message; `[]` when none. */
  attachments: StoredFile[];
  /** The documents and web pages an answer drew on; `[]` (or missing, from older servers) when none. */
  sources?: MessageSource[];
}
