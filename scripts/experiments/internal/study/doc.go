// Package study is the plumbing of the experiment commands under
// scripts/experiments: their common flags, the vit-train build they run,
// the plan of training runs (one folder each, skipped when finished,
// resumed when stopped, every vit-train process recorded), the reading of
// finished runs, statistics over seeds, verdicts computed from them, the
// consistency checks, the time estimate of a full study from a quick one,
// and the figures' PNG writer.
package study
