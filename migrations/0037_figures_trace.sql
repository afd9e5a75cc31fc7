-- An answer's figures, checked against the figures its run's tools returned, are traced with
-- the run: one `figures` event after the last model call of an answer that states a figure.
ALTER TYPE trace_event_type ADD VALUE IF NOT EXISTS 'figures';
