/**
 * What the operator of an installation fills in for the privacy policy (GDPR Art. 13):
 * who the controller is and how to reach them, and which providers this installation uses.
 * An empty value shows a "[… filled in by the operator]" placeholder on the page, so a
 * missing detail is visible instead of silently left out. The texts around them are in
 * src/locales/<lang>/legal.json (`privacy.*`), in both languages.
 */
export const POLICY_DETAILS = {
  /** The date this version of the policy took effect (YYYY-MM-DD); raise it with every change. */
  lastUpdated: '2026-11-26',
  controller: {
    /** Legal name of the person or company operating this installation. */
    name: '',
    /** Postal address of the controller. */
    address: '',
    /** Where privacy requests go; shown as a mailto link. */
    email: '',
  },
  /** The AI model, payment, hosting and e-mail providers of this installation, with their locations. */
  processors: '',
};
