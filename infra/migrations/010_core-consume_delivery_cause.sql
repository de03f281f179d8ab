-- The cause of a webhook delivery: the meta its events carry (WebhookDeliveryScheduled,
-- WebhookDeliveryAttempted, WebhookDelivered, ...): causation_id "event:<position>" of the event
-- the dispatcher's intake turned into the delivery, and that event's chain as correlation_id.
-- Written by the intake with the row; deliveries scheduled before this column existed carry no
-- cause ('{}').
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS cause jsonb NOT NULL DEFAULT '{}'::jsonb;
