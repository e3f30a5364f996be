import { useEffect, useState } from 'react';
import type { Plan } from '@/types/generated';
import { subscriptionApi } from '../api/subscription-api';

/** The catalogue for pages without a subscription screen (the landing page); none on failure. */
export function usePublicPlans(): Plan[] {
  const [plans, setPlans] = useState<Plan[]>([]);
  useEffect(() => {
    let live = true;
    subscriptionApi
      .getPlans()
      .then((answer) => live && setPlans(answer.data))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  return plans;
}
