-- Suspending an account (issue 34) stops its plan from renewing; lifting the suspension
-- renews it again, but only if the suspension was what stopped it (a user who had
-- cancelled themselves stays cancelled). Set while a suspension holds the renewal: the
-- plan it renewed as then (the plan itself, or a scheduled downgrade); NULL otherwise.
ALTER TABLE subscriptions ADD COLUMN suspension_renews_as TEXT;
