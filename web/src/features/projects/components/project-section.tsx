import { useId, useRef, useState, type ChangeEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { CloseIcon } from '@/components/icons';
import { useCloseDrawer } from '@/components/layout/sidebar-slot-context';
import { Spinner } from '@/components/spinner';
import { selectPlan, useSubscriptionStore } from '@/features/subscription';
import { MAX_PROJECT_FILES, type Attachment, type Project } from '@/types/generated';
import { projectCallError, type ProjectCallError } from '../lib/project-errors';
import { useProjectStore, type ProjectUpload } from '../stores/projects';
import { ProjectCallAlert } from './project-dialogs';
import {
  attachmentLimits,
  DOCUMENT_ACCEPT,
  documentNotice,
  formatFileSize,
  projectGate,
  useChatStore,
  type GateNoticeKind,
} from '@/features/chat';
import { AlertIcon, DocumentIcon, FolderIcon, GateNotice, LockIcon, PencilIcon, PlusIcon, TrashIcon } from '@/features/chat/ui';
import styles from './projects.module.css';

/** Projects listed before "Show all": the sidebar is for conversations first. */
export const PROJECTS_SHOWN = 5;

/**
 * The sidebar's "Projects": the user's projects (most recently changed first, with their
 * conversation counts) and "New project". A project is a filter: choosing it shows its
 * panel and conversations below; choosing it again shows all conversations.
 *
 * On a plan without projects, a user who has none sees one locked line (its press says
 * why); one who has some (from a bigger plan) still lists, reads, empties and deletes them.
 */
export function ProjectSection({ onCreate }: { onCreate: () => void }) {
  const { t } = useTranslation('chat');
  const headingId = useId();
  const projects = useProjectStore((s) => s.projects);
  const status = useProjectStore((s) => s.status);
  const selectedId = useProjectStore((s) => s.selectedId);
  const gate = useSubscriptionStore((s) => projectGate(selectPlan(s)));
  const [notice, setNotice] = useState(false);
  const [expanded, setExpanded] = useState(false);

  // Nothing to say until the plan is known, unless projects are there to list.
  if (gate === 'unknown' && projects.length === 0) return null;
  if (gate === 'premium' && projects.length === 0) {
    return (
      <section className={styles.section} aria-labelledby={headingId} data-testid="project-section" data-gate={gate}>
        <div className={styles.sectionHead}>
          <h2 id={headingId} className={styles.heading}>
            {t('projects.heading')}
          </h2>
          <Button
            variant="ghost"
            size="small"
            iconOnly
            aria-label={t('projects.new')}
            title={t('projects.lockedHint')}
            data-testid="new-project-button"
            data-gate={gate}
            onClick={() => setNotice(true)}
          >
            <LockIcon width={16} height={16} />
          </Button>
        </div>
        {notice && <ProjectsPremiumNotice onDismiss={() => setNotice(false)} />}
      </section>
    );
  }

  const selectedIndex = projects.findIndex((p) => p._id === selectedId);
  // The chosen project stays in view even when it is past the first few.
  const shown =
    expanded || projects.length <= PROJECTS_SHOWN + 1
      ? projects
      : projects.filter((_, index) => index < PROJECTS_SHOWN || index === selectedIndex);

  return (
    <section className={styles.section} aria-labelledby={headingId} data-testid="project-section" data-gate={gate}>
      <div className={styles.sectionHead}>
        <h2 id={headingId} className={styles.heading}>
          {t('projects.heading')}
        </h2>
        <Button
          variant="ghost"
          size="small"
          iconOnly
          aria-label={t('projects.new')}
          title={t('projects.new')}
          data-testid="new-project-button"
          data-gate={gate}
          onClick={() => {
            if (gate === 'available') onCreate();
            else setNotice(true);
          }}
        >
          {gate === 'available' ? <PlusIcon width={18} height={18} /> : <LockIcon width={16} height={16} />}
        </Button>
      </div>
      {notice && <ProjectsPremiumNotice onDismiss={() => setNotice(false)} />}
      {status === 'loading' && projects.length === 0 && (
        <div className={styles.state}>
          <Spinner size="small" label={t('projects.loading')} />
        </div>
      )}
      {status === 'error' && projects.length === 0 && (
        <div className={styles.state}>
          <p>{t('projects.loadFailed')}</p>
          <Button variant="secondary" size="small" onClick={() => void useProjectStore.getState().loadProjects()}>
            {t('actions.retry')}
          </Button>
        </div>
      )}
      {projects.length > 0 && (
        <ul className={styles.projectList} aria-labelledby={headingId} data-testid="project-list">
          {shown.map((project) => (
            <ProjectItem key={project._id} project={project} selected={project._id === selectedId} />
          ))}
        </ul>
      )}
      {shown.length < projects.length || expanded ? (
        <Button
          variant="link"
          size="small"
          className={styles.more}
          aria-expanded={expanded}
          data-testid="projects-show-all"
          onClick={() => setExpanded(!expanded)}
        >
          {expanded ? t('projects.showFewer') : t('projects.showAll', { count: projects.length })}
        </Button>
      ) : null}
    </section>
  );
}

function ProjectItem({ project, selected }: { project: Project; selected: boolean }) {
  const { t } = useTranslation('chat');
  return (
    <li>
      <button
        type="button"
        className={styles.projectItem}
        aria-pressed={selected}
        title={project.name}
        data-testid="project-item"
        data-project-id={project._id}
        onClick={() => useProjectStore.getState().select(selected ? null : project._id)}
      >
        <FolderIcon width={18} height={18} className={styles.folder} />
        <span className={styles.projectName}>{project.name}</span>
        <span className={styles.count} aria-hidden="true" data-testid="project-count">
          {project.conversations}
        </span>
        <span className="visually-hidden">{t('projects.conversationCount', { count: project.conversations })}</span>
      </button>
    </li>
  );
}

export function ProjectsPremiumNotice({ onDismiss }: { onDismiss: () => void }) {
  const id = useId();
  return <GateNotice id={id} kind="projectsPremium" onDismiss={onDismiss} />;
}

/**
 * The chosen project: its name, instructions and documents, what can be done with it,
 * and "New chat in project" (the next send starts its conversation there).
 */
export function ProjectPanel({
  project,
  onEdit,
  onDelete,
}: {
  project: Project;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const { t } = useTranslation('chat');
  const navigate = useNavigate();
  const closeDrawer = useCloseDrawer();
  const noticeId = useId();
  const gate = useSubscriptionStore((s) => projectGate(selectPlan(s)));
  const [notice, setNotice] = useState<GateNoticeKind | null>(null);
  const [expanded, setExpanded] = useState(false);
  const instructions = project.instructions.trim();
  // Long instructions are folded to a few lines; their whole text is one press away.
  const long = instructions.length > 160 || instructions.split('\n').length > 3;

  return (
    <section
      className={styles.panel}
      aria-label={t('projects.panel', { name: project.name })}
      data-testid="project-panel"
      data-project-id={project._id}
    >
      <div className={styles.panelHead}>
        <FolderIcon width={20} height={20} className={styles.folder} />
        <h2 className={styles.panelName} data-testid="project-panel-name" title={project.name}>
          {project.name}
        </h2>
        <span className={styles.panelActions}>
          <Button
            variant="ghost"
            size="small"
            iconOnly
            aria-label={t('projects.edit', { name: project.name })}
            data-testid="project-edit"
            data-gate={gate}
            onClick={() => (gate === 'available' ? onEdit() : setNotice('projectsPremium'))}
          >
            {gate === 'available' ? <PencilIcon width={16} height={16} /> : <LockIcon width={16} height={16} />}
          </Button>
          <Button
            variant="ghost"
            size="small"
            iconOnly
            aria-label={t('projects.delete', { name: project.name })}
            data-testid="project-delete"
            onClick={onDelete}
          >
            <TrashIcon width={16} height={16} />
          </Button>
          <Button
            variant="ghost"
            size="small"
            iconOnly
            aria-label={t('projects.close')}
            title={t('projects.close')}
            data-testid="project-close"
            onClick={() => useProjectStore.getState().select(null)}
          >
            <CloseIcon width={16} height={16} />
          </Button>
        </span>
      </div>

      <div className={styles.instructionsBlock}>
        <h3 className={styles.subheading}>{t('projects.instructions')}</h3>
        {instructions ? (
          <>
            <p className={styles.instructions} data-clamped={(long && !expanded) || undefined} data-testid="project-instructions">
              {instructions}
            </p>
            {long && (
              <Button variant="link" size="small" className={styles.more} aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
                {expanded ? t('projects.less') : t('projects.more')}
              </Button>
            )}
          </>
        ) : (
          <p className={styles.muted} data-testid="project-instructions">
            {t('projects.noInstructions')}
          </p>
        )}
      </div>

      <ProjectDocuments project={project} onNotice={setNotice} />

      {notice && <GateNotice id={noticeId} kind={notice} onDismiss={() => setNotice(null)} />}

      <Button
        block
        size="small"
        data-testid="new-chat-in-project"
        data-gate={gate}
        onClick={() => {
          // A conversation started in a project fills it: the server refuses that too.
          if (gate !== 'available') {
            setNotice('projectsPremium');
            return;
          }
          closeDrawer();
          void navigate(`/chat?project=${encodeURIComponent(project._id)}`);
          useChatStore.getState().requestComposerFocus();
        }}
      >
        {gate === 'available' ? <PlusIcon width={18} height={18} /> : <LockIcon width={16} height={16} />}
        {t('projects.newChat')}
      </Button>
    </section>
  );
}

/** The project's documents: each with its reading progress, then pages and size; uploads on their way. */
function ProjectDocuments({ project, onNotice }: { project: Project; onNotice: (kind: GateNoticeKind) => void }) {
  const { t } = useTranslation('chat');
  const headingId = useId();
  const input = useRef<HTMLInputElement>(null);
  const plan = useSubscriptionStore(selectPlan);
  const files = useProjectStore((s) => s.files[project._id]);
  const filesStatus = useProjectStore((s) => s.filesStatus[project._id]);
  const uploads = useProjectStore((s) => s.uploads[project._id]);
  const [removeError, setRemoveError] = useState<ProjectCallError | null>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const count = files?.length ?? 0;

  const onAdd = () => {
    if (projectGate(plan) !== 'available') {
      onNotice('projectsPremium');
      return;
    }
    // The plan or this server may take no documents at all: the composer's notice says so.
    const notice = documentNotice(plan);
    if (notice) onNotice(notice);
    else input.current?.click();
  };

  const onChosen = (event: ChangeEvent<HTMLInputElement>) => {
    const chosen = [...(event.target.files ?? [])];
    // Cleared so that choosing the same file again still fires a change.
    event.target.value = '';
    useProjectStore.getState().addDocuments(project._id, chosen, attachmentLimits(plan).documentMaxMb);
  };

  const remove = async (file: Attachment) => {
    setRemoveError(null);
    setRemoving(file._id);
    try {
      await useProjectStore.getState().removeFile(project._id, file._id);
    } catch (error) {
      setRemoveError(projectCallError(error));
    } finally {
      setRemoving(null);
    }
  };

  return (
    <div className={styles.documents} aria-labelledby={headingId} role="group">
      <div className={styles.documentsHead}>
        <h3 id={headingId} className={styles.subheading}>
          {t('projects.documents')}
        </h3>
        <span className={styles.documentCount} data-testid="project-document-count">
          {t('projects.documentCount', { count, max: MAX_PROJECT_FILES })}
        </span>
        <Button
          variant="ghost"
          size="small"
          className={styles.addDocument}
          data-testid="project-add-document"
          onClick={onAdd}
        >
          {projectGate(plan) === 'available' ? <PlusIcon width={16} height={16} /> : <LockIcon width={14} height={14} />}
          {t('projects.addDocument')}
        </Button>
      </div>
      {filesStatus === 'loading' && !files && <Spinner size="small" label={t('projects.loading')} />}
      {filesStatus === 'error' && !files && (
        <div className={styles.state}>
          <p>{t('projects.documentsLoadFailed')}</p>
          <Button variant="secondary" size="small" onClick={() => void useProjectStore.getState().loadFiles(project._id)}>
            {t('actions.retry')}
          </Button>
        </div>
      )}
      {files && count === 0 && (uploads ?? []).length === 0 && <p className={styles.muted}>{t('projects.noDocuments')}</p>}
      {(count > 0 || (uploads ?? []).length > 0) && (
        <ul className={styles.documentList} aria-labelledby={headingId} data-testid="project-documents">
          {(files ?? []).map((file) => (
            <ProjectDocument
              key={file._id}
              file={file}
              removing={removing === file._id}
              onRemove={() => void remove(file)}
            />
          ))}
          {(uploads ?? []).map((upload) => (
            <UploadItem key={upload.localId} projectId={project._id} upload={upload} />
          ))}
        </ul>
      )}
      <ProjectCallAlert error={removeError} />
      <input
        ref={input}
        type="file"
        accept={DOCUMENT_ACCEPT}
        multiple
        hidden
        tabIndex={-1}
        data-testid="project-document-input"
        onChange={onChosen}
      />
    </div>
  );
}

function ProjectDocument({ file, removing, onRemove }: { file: Attachment; removing: boolean; onRemove: () => void }) {
  const { t, i18n } = useTranslation('chat');
  const percent = new Intl.NumberFormat(i18n.language, { style: 'percent' }).format(file.progress / 100);
  const failed = file.status === 'failed';
  return (
    <li
      className={styles.document}
      data-testid="project-document"
      data-status={file.status}
      data-file-id={file._id}
      data-failed={failed || undefined}
      aria-busy={file.status === 'processing' || undefined}
    >
      {failed ? (
        <AlertIcon width={18} height={18} className={styles.documentIcon} />
      ) : (
        <DocumentIcon width={18} height={18} className={styles.documentIcon} />
      )}
      <span className={styles.documentText}>
        <a
          className={styles.documentName}
          href={file.url}
          target="_blank"
          rel="noopener noreferrer"
          title={t('projects.openDocument', { name: file.name })}
        >
          {file.name}
        </a>
        {file.status === 'processing' && (
          <span className={styles.documentMeta}>
            <span
              className={styles.progress}
              role="progressbar"
              aria-label={t('attach.processing', { name: file.name })}
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={file.progress}
              data-testid="project-document-progress"
            >
              <span className={styles.progressBar} style={{ width: `${file.progress}%` }} />
            </span>
            <span aria-hidden="true">{percent}</span>
          </span>
        )}
        {file.status === 'ready' && (
          <span className={styles.documentMeta}>
            {[file.pages ? t('attach.pages', { count: file.pages }) : null, formatFileSize(file.size, i18n.language)]
              .filter(Boolean)
              .join(' · ')}
          </span>
        )}
        {failed && <span className={`${styles.documentMeta} ${styles.error}`}>{t('attach.unreadable')}</span>}
      </span>
      <Button
        variant="ghost"
        size="small"
        iconOnly
        className={styles.documentRemove}
        aria-label={t('projects.removeDocument', { name: file.name })}
        loading={removing}
        data-testid="project-document-remove"
        onClick={onRemove}
      >
        {!removing && <CloseIcon width={14} height={14} />}
      </Button>
    </li>
  );
}

function UploadItem({ projectId, upload }: { projectId: string; upload: ProjectUpload }) {
  const { t } = useTranslation(['chat', 'errors']);
  const failed = upload.status === 'error';
  const reason = !upload.error
    ? null
    : upload.error.kind === 'unsupported'
      ? t('projects.unsupported')
      : upload.error.kind === 'tooLarge'
        ? t('attach.documentTooLarge', { max: upload.error.max })
        : (upload.error.message ?? t('errors:fileUploadError'));
  return (
    <li
      className={styles.document}
      data-testid="project-upload"
      data-status={upload.status}
      data-failed={failed || undefined}
      aria-busy={!failed || undefined}
    >
      {failed ? (
        <AlertIcon width={18} height={18} className={styles.documentIcon} />
      ) : (
        <DocumentIcon width={18} height={18} className={styles.documentIcon} />
      )}
      <span className={styles.documentText}>
        <span className={styles.documentName} title={upload.name}>
          {upload.name}
        </span>
        {failed ? (
          <span className={`${styles.documentMeta} ${styles.error}`} role="alert" data-testid="project-upload-error">
            {t('projects.uploadFailed', { name: upload.name })}: {reason}
          </span>
        ) : (
          <span className={styles.documentMeta}>
            <Spinner size="small" label={t('attach.uploading', { name: upload.name })} />
          </span>
        )}
      </span>
      <Button
        variant="ghost"
        size="small"
        iconOnly
        className={styles.documentRemove}
        aria-label={failed ? t('projects.dismiss') : t('projects.removeDocument', { name: upload.name })}
        data-testid="project-upload-dismiss"
        onClick={() => useProjectStore.getState().dismissUpload(projectId, upload.localId)}
      >
        <CloseIcon width={14} height={14} />
      </Button>
    </li>
  );
}
