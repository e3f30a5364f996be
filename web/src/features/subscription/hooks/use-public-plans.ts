import { useEffect, useState } from 'react';
import { subscriptionApi } from '../api/subscription-api';
import type { Plan } from '../api/types';

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
