import { useState } from 'react';
import { errorMessage } from '@/lib/api-client';
import { invoiceFileName, saveFile } from '@/lib/save-file';
import type { Invoice } from '@/types/generated';

/**
 * Downloads an invoice's or credit note's PDF through `fetchPdf` (the user's own route, or
 * the console's): which one is on its way, and the last failure's message.
 */
export function useInvoiceDownload(fetchPdf: (invoice: Invoice) => Promise<Blob>) {
  const [downloading, setDownloading] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const download = async (invoice: Invoice) => {
    setDownloading(invoice._id);
    setError(null);
    try {
      saveFile(await fetchPdf(invoice), invoiceFileName(invoice));
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setDownloading(null);
    }
  };

  return { downloading, error, download };
}
