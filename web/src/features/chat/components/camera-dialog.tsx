import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { Spinner } from '@/components/spinner';
import styles from './camera-dialog.module.css';

export interface CameraDialogProps {
  open: boolean;
  onClose: () => void;
  /** A frame was taken (as a JPEG file); the dialog closes itself through onClose. */
  onCapture: (file: File) => void;
  /** No camera, no permission, or no camera API: the caller falls back to the file picker. */
  onError: (error: unknown) => void;
}

/** The phone's rear camera where there is one; any camera elsewhere. */
const CONSTRAINTS: MediaStreamConstraints = { video: { facingMode: { ideal: 'environment' } }, audio: false };
const JPEG_QUALITY = 0.9;

function stop(stream: MediaStream | null): void {
  stream?.getTracks().forEach((track) => track.stop());
}

function frameToFile(video: HTMLVideoElement): Promise<File> {
  return new Promise((resolve, reject) => {
    const canvas = document.createElement('canvas');
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    const context = canvas.getContext('2d');
    if (!context || canvas.width === 0) {
      reject(new Error('no frame'));
      return;
    }
    context.drawImage(video, 0, 0, canvas.width, canvas.height);
    canvas.toBlob(
      (blob) => {
        if (!blob) {
          reject(new Error('encode failed'));
          return;
        }
        // A name the demo model and the file list can show: photo-2025-03-14-101502.jpg.
        const stamp = new Date().toISOString().slice(0, 19).replace('T', '-').replaceAll(':', '');
        resolve(new File([blob], `photo-${stamp}.jpg`, { type: 'image/jpeg' }));
      },
      'image/jpeg',
      JPEG_QUALITY,
    );
  });
}

/**
 * Takes a photo with `getUserMedia`: a live preview, a capture button and cancel. The
 * camera is on only while the dialog is open: its tracks stop when it closes.
 */
export function CameraDialog({ open, onClose, onCapture, onError }: CameraDialogProps) {
  const { t } = useTranslation('chat');
  const videoRef = useRef<HTMLVideoElement>(null);
  const [stream, setStream] = useState<MediaStream | null>(null);
  const [ready, setReady] = useState(false);
  const [capturing, setCapturing] = useState(false);
  // The latest onError, so a parent's new callback does not restart the camera.
  const onErrorRef = useRef(onError);
  useEffect(() => {
    onErrorRef.current = onError;
  });

  useEffect(() => {
    if (!open) return;
    let cancelled = false;
    let started: MediaStream | null = null;
    const media = typeof navigator !== 'undefined' ? navigator.mediaDevices : undefined;
    if (!media?.getUserMedia) {
      // Insecure origins (plain http other than localhost) and old browsers have none.
      queueMicrotask(() => onErrorRef.current(new Error('no mediaDevices')));
      return;
    }
    media.getUserMedia(CONSTRAINTS).then(
      (next) => {
        // Closed while the browser asked for permission: the camera goes off at once.
        if (cancelled) stop(next);
        else {
          started = next;
          setStream(next);
        }
      },
      (error: unknown) => {
        if (!cancelled) onErrorRef.current(error);
      },
    );
    return () => {
      cancelled = true;
      stop(started);
      setStream(null);
      setReady(false);
      setCapturing(false);
    };
  }, [open]);

  useEffect(() => {
    const video = videoRef.current;
    if (!video || !stream) return;
    video.srcObject = stream;
    // autoPlay covers it; this helps where autoplay waits for a gesture (and jsdom has none).
    video.play()?.catch(() => undefined);
    return () => {
      video.srcObject = null;
    };
  }, [stream]);

  const capture = async () => {
    const video = videoRef.current;
    if (!video) return;
    setCapturing(true);
    try {
      onCapture(await frameToFile(video));
      onClose();
    } catch (error) {
      onErrorRef.current(error);
    } finally {
      setCapturing(false);
    }
  };

  return (
    <Dialog open={open} onClose={onClose} title={t('attach.cameraTitle')} className={styles.dialog}>
      <div className={styles.stage} data-testid="camera-dialog">
        <video
          ref={videoRef}
          className={styles.video}
          autoPlay
          playsInline
          muted
          data-testid="camera-video"
          onLoadedMetadata={() => setReady(true)}
        />
        {!ready && (
          <span className={styles.starting}>
            <Spinner label={t('attach.cameraStarting')} />
          </span>
        )}
      </div>
      <div className={styles.actions}>
        <Button variant="secondary" data-testid="camera-cancel" onClick={onClose}>
          {t('actions.cancel')}
        </Button>
        <Button data-testid="camera-capture" disabled={!ready} loading={capturing} onClick={() => void capture()}>
          {t('attach.capture')}
        </Button>
      </div>
    </Dialog>
  );
}
