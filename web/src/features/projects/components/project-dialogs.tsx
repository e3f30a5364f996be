import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { projectGate } from '@/features/chat';
import { dialogStyles, FolderIcon, UpgradeLink } from '@/features/chat/ui';
import { selectPlan, useSubscriptionStore } from '@/features/subscription';
import { errorMessage, isApiError } from '@/lib/api-client';
import {
  MAX_PROJECT_INSTRUCTIONS_CHARS,
  MAX_PROJECT_NAME_CHARS,
  type Conversation,
  type Project,
} from '@/types/generated';
import { projectCallError, type ProjectCallError } from '../lib/project-errors';
import {
  charLength,
  validateProjectInstructions,
  validateProjectName,
} from '../lib/project-validation';
import { useProjectStore } from '../stores/projects';
import styles from './projects.module.css';

/** A refused call's words above the dialog's buttons, with "Upgrade plan" when a plan would lift it. */
export function ProjectCallAlert({ error }: { error: ProjectCallError | null }) {
  if (!error) return null;
  return (
    <FormAlert>
      <span className={styles.alertText}>{error.message}</span>
      {error.upgrade && <UpgradeLink />}
    </FormAlert>
  );
}

export type ProjectFormMode = { kind: 'create' } | { kind: 'edit'; project: Project };

/** Creates a project (name, instructions), or edits one; checked as the server checks. */
export function ProjectFormDialog({
  mode,
  onClose,
}: {
  mode: ProjectFormMode | null;
  /** With the project once saved. */
  onClose: (saved?: Project) => void;
}) {
  const { t } = useTranslation('chat');
  const editing = mode?.kind === 'edit' ? mode.project : null;
  const [name, setName] = useState(editing?.name ?? '');
  const [instructions, setInstructions] = useState(editing?.instructions ?? '');
  const [submitted, setSubmitted] = useState(false);
  const [serverField, setServerField] = useState<{ field: 'name' | 'instructions'; message: string } | null>(null);
  const [callError, setCallError] = useState<ProjectCallError | null>(null);
  const [pending, setPending] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const instructionsId = useId();
  const open = mode !== null;

  // Opened: the name is ready to type (or retype).
  useEffect(() => {
    if (open) formRef.current?.querySelector('input')?.select();
  }, [open]);

  // The rules speak once the form was sent, then as the text changes.
  const nameError = submitted ? validateProjectName(name) : null;
  const instructionsError = validateProjectInstructions(instructions);
  const nameText =
    (nameError && t(`projects.validation.${nameError}`, { max: MAX_PROJECT_NAME_CHARS })) ||
    (serverField?.field === 'name' ? serverField.message : null);
  const instructionsText =
    (instructionsError && t(`projects.validation.${instructionsError}`, { max: MAX_PROJECT_INSTRUCTIONS_CHARS })) ||
    (serverField?.field === 'instructions' ? serverField.message : null);
  const instructionsLength = charLength(instructions.trim());

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    const badName = validateProjectName(name);
    if (badName || instructionsError) {
      formRef.current?.querySelector<HTMLElement>(badName ? 'input' : 'textarea')?.focus();
      return;
    }
    setServerField(null);
    setCallError(null);
    setPending(true);
    try {
      const input = { name: name.trim(), instructions: instructions.trim() };
      const store = useProjectStore.getState();
      const saved = editing ? await store.update(editing._id, input) : await store.create(input);
      onClose(saved);
    } catch (error) {
      const field = isApiError(error) ? error.field : undefined;
      const message = errorMessage(error);
      if (message && (field === 'name' || field === 'instructions')) setServerField({ field, message });
      else setCallError(projectCallError(error));
    } finally {
      setPending(false);
    }
  };

  return (
    <Dialog
      open={open}
      onClose={() => onClose()}
      title={t(editing ? 'projects.form.editTitle' : 'projects.form.createTitle')}
    >
      <form ref={formRef} className={dialogStyles.form} onSubmit={(event) => void submit(event)} noValidate>
        <TextField
          label={t('projects.form.name')}
          value={name}
          // A little over the limit can be typed, so that the rule can say why it is refused.
          maxLength={MAX_PROJECT_NAME_CHARS + 20}
          autoComplete="off"
          error={nameText}
          data-testid="project-name-input"
          onChange={(event) => {
            setName(event.target.value);
            if (serverField?.field === 'name') setServerField(null);
          }}
        />
        <div className={styles.field}>
          <label htmlFor={instructionsId} className={styles.label}>
            {t('projects.form.instructions')}
          </label>
          <textarea
            id={instructionsId}
            className={styles.textarea}
            rows={6}
            value={instructions}
            aria-invalid={instructionsText ? true : undefined}
            aria-describedby={[`${instructionsId}-hint`, `${instructionsId}-counter`, instructionsText && `${instructionsId}-error`]
              .filter(Boolean)
              .join(' ')}
            data-testid="project-instructions-input"
            onChange={(event) => {
              setInstructions(event.target.value);
              if (serverField?.field === 'instructions') setServerField(null);
            }}
          />
          <span id={`${instructionsId}-hint`} className={styles.hint}>
            {t('projects.form.instructionsHint')}
          </span>
          <div className={styles.fieldFooter}>
            {instructionsText && (
              <span id={`${instructionsId}-error`} className={styles.error}>
                {instructionsText}
              </span>
            )}
            <span
              id={`${instructionsId}-counter`}
              className={styles.counter}
              data-over={instructionsLength > MAX_PROJECT_INSTRUCTIONS_CHARS || undefined}
            >
              {t('projects.form.counter', { length: instructionsLength, max: MAX_PROJECT_INSTRUCTIONS_CHARS })}
            </span>
          </div>
        </div>
        <ProjectCallAlert error={callError} />
        <div className={dialogStyles.buttons}>
          <Button variant="secondary" onClick={() => onClose()}>
            {t('actions.cancel')}
          </Button>
          <Button type="submit" loading={pending} data-testid="project-save">
            {t(editing ? 'projects.form.save' : 'projects.form.create')}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/** Deletes a project: its conversations stay (outside any project) or go with it. */
export function DeleteProjectDialog({ project, onClose }: { project: Project | null; onClose: (deleted: boolean) => void }) {
  const { t } = useTranslation('chat');
  const [deleteConversations, setDeleteConversations] = useState(false);
  const [error, setError] = useState<ProjectCallError | null>(null);
  const [pending, setPending] = useState(false);
  const choiceId = useId();
  const count = project?.conversations ?? 0;

  const confirm = async () => {
    if (!project) return;
    setError(null);
    setPending(true);
    try {
      await useProjectStore.getState().remove(project._id, deleteConversations && count > 0);
      onClose(true);
    } catch (caught) {
      setError(projectCallError(caught));
    } finally {
      setPending(false);
    }
  };

  return (
    <Dialog open={project !== null} onClose={() => onClose(false)} title={t('projects.deleteDialog.title')}>
      <p className={dialogStyles.body}>{t('projects.deleteDialog.body', { name: project?.name ?? '' })}</p>
      {count > 0 && (
        <fieldset className={styles.choices} data-testid="project-delete-choice">
          <legend className={styles.label}>{t('projects.deleteDialog.choice')}</legend>
          <label className={styles.choice}>
            <input
              type="radio"
              name={choiceId}
              checked={!deleteConversations}
              data-testid="project-delete-keep"
              onChange={() => setDeleteConversations(false)}
            />
            <span>
              <span className={styles.choiceTitle}>{t('projects.deleteDialog.keep')}</span>
              <span className={styles.hint}>{t('projects.deleteDialog.keepHint')}</span>
            </span>
          </label>
          <label className={styles.choice}>
            <input
              type="radio"
              name={choiceId}
              checked={deleteConversations}
              data-testid="project-delete-conversations"
              onChange={() => setDeleteConversations(true)}
            />
            <span>
              <span className={styles.choiceTitle}>{t('projects.deleteDialog.deleteToo', { count })}</span>
              <span className={styles.hint}>{t('projects.deleteDialog.deleteTooHint')}</span>
            </span>
          </label>
        </fieldset>
      )}
      <ProjectCallAlert error={error} />
      <div className={dialogStyles.buttons}>
        <Button variant="secondary" onClick={() => onClose(false)}>
          {t('actions.cancel')}
        </Button>
        <Button variant="danger" loading={pending} data-testid="project-delete-confirm" onClick={() => void confirm()}>
          {t('projects.deleteDialog.confirm')}
        </Button>
      </div>
    </Dialog>
  );
}

/**
 * "Move to project…": the projects and "No project", the current one marked. Moving out
 * works on every plan (a downgraded user empties projects); moving in needs projects.
 */
export function MoveConversationDialog({
  conversation,
  onClose,
}: {
  conversation: Conversation | null;
  onClose: () => void;
}) {
  const { t } = useTranslation('chat');
  const projects = useProjectStore((s) => s.projects);
  const gate = useSubscriptionStore((s) => projectGate(selectPlan(s)));
  const [pendingId, setPendingId] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<ProjectCallError | null>(null);
  const current = conversation?.projectId ?? null;
  const title = conversation?.title ?? t('untitled');

  const move = async (projectId: string | null) => {
    if (!conversation || projectId === current) return;
    if (projectId && gate !== 'available') {
      setError({ message: t('gating.projectsPremium'), upgrade: true });
      return;
    }
    setError(null);
    setPendingId(projectId);
    try {
      await useProjectStore.getState().move(conversation._id, projectId);
      onClose();
    } catch (caught) {
      setError(projectCallError(caught));
    } finally {
      setPendingId(undefined);
    }
  };

  const option = (projectId: string | null, label: string, detail: string | null) => {
    const isCurrent = projectId === current;
    return (
      <li key={projectId ?? 'none'}>
        <Button
          variant="ghost"
          block
          className={styles.moveOption}
          aria-current={isCurrent || undefined}
          disabled={isCurrent || pendingId !== undefined}
          loading={pendingId === projectId}
          data-testid="move-option"
          data-project-id={projectId ?? ''}
          onClick={() => void move(projectId)}
        >
          <FolderIcon width={18} height={18} className={projectId ? undefined : styles.mutedIcon} />
          <span className={styles.moveName}>{label}</span>
          {isCurrent ? (
            <span className={styles.badge}>{t('projects.moveDialog.current')}</span>
          ) : (
            detail && <span className={styles.moveDetail}>{detail}</span>
          )}
        </Button>
      </li>
    );
  };

  return (
    <Dialog open={conversation !== null} onClose={onClose} title={t('projects.moveDialog.title')}>
      <p className={dialogStyles.body}>{t('projects.moveDialog.body', { title })}</p>
      <ul className={styles.moveList} data-testid="move-options">
        {option(null, t('projects.moveDialog.noProject'), null)}
        {projects.map((project) =>
          option(project._id, project.name, t('projects.conversationCount', { count: project.conversations })),
        )}
      </ul>
      <ProjectCallAlert error={error} />
      <div className={dialogStyles.buttons}>
        <Button variant="secondary" onClick={onClose}>
          {t('actions.cancel')}
        </Button>
      </div>
    </Dialog>
  );
}
