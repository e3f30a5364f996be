/** Decorative icons for the landing page's feature cards (only used here), built with the shared `Icon` wrapper at 24px. */
import { Icon as BaseIcon, type IconProps } from '@/components/icons';

/** The shared wrapper at the larger size these cards use; `props` can still override it. */
const Icon = ({ children, ...props }: IconProps) => (
  <BaseIcon width="24" height="24" {...props}>
    {children}
  </BaseIcon>
);

export const ListIcon = (props: IconProps) => (
  <Icon {...props}>
    <path d="M8 6h13M8 12h13M8 18h13M3 6h.01M3 12h.01M3 18h.01" />
  </Icon>
);

export const GaugeIcon = (props: IconProps) => (
  <Icon {...props}>
    <path d="M12 14l4-4" />
    <path d="M3.3 19a10 10 0 1 1 17.4 0" />
  </Icon>
);

export const ShieldIcon = (props: IconProps) => (
  <Icon {...props}>
    <path d="M12 22s8-4 8-10V5l-8-3-8 3v7c0 6 8 10 8 10z" />
    <path d="M9 12l2 2 4-4" />
  </Icon>
);
