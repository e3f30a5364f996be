/**
 * Saves a file the server sent (an invoice's PDF): the download needs the session, so it
 * is fetched as a blob and saved, never a plain link.
 */
export function saveFile(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // Late enough for the browser to have started the download.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The file name of an invoice's or credit note's PDF, as the server names it. */
export function invoiceFileName(invoice: { kind: 'invoice' | 'credit_note'; number: string }): string {
  return `${invoice.kind === 'credit_note' ? 'credit-note' : 'invoice'}-${invoice.number}.pdf`;
}
