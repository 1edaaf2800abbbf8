// Package advancedcronjob owns the AdvancedCronJob controller: at each time of spec.schedule
// (robfig/cron five-field syntax, read in spec.timeZone) it creates a Job, a BroadcastJob or an
// ImageListPullJob from spec.template, honouring concurrencyPolicy, paused and
// startingDeadlineSeconds; it keeps successfulJobsHistoryLimit and failedJobsHistoryLimit
// finished children and reports active, lastScheduleTime and type in status. Time comes from
// the injected clock, and wake-ups for the next run are timers of that clock, so tests drive
// the schedule by stepping a fake clock.
//
// It imports apis/ and controllers/setup; it must not import the manager, webhooks or other
// controllers (`controllers/...` other than `controllers/setup` and `controllers/internal/...`):
// it creates ImageListPullJobs but never reconciles them.
package advancedcronjob
