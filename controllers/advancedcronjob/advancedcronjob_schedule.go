package advancedcronjob

import (
	"fmt"
	"strings"
	"time"

	// The manager image has no zoneinfo; spec.timeZone must resolve all the same.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// maxMissedRuns bounds the search for missed runs, as 1.8 does, so that a clock far off or a
// long outage does not make the controller walk decades of minutes.
const maxMissedRuns = 100

// parseSchedule reads spec.schedule in spec.timeZone. A schedule that names its own TZ= or
// CRON_TZ= keeps it.
func parseSchedule(acj *appsv1alpha1.AdvancedCronJob) (cron.Schedule, error) {
	spec := acj.Spec.Schedule
	if tz := acj.Spec.TimeZone; tz != nil && !strings.Contains(spec, "TZ") {
		if _, err := time.LoadLocation(*tz); err != nil {
			return nil, fmt.Errorf("spec.timeZone %q is not a known IANA time zone: %w", *tz, err)
		}
		spec = fmt.Sprintf("TZ=%s %s", *tz, spec)
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule %q is not a five-field cron schedule: %w", acj.Spec.Schedule, err)
	}
	return s, nil
}

// nextRuns returns the latest run due at or before now that has not been started (zero when
// none), and the first run after now. Runs are counted from the last scheduled run, or from
// the creation time, but never from before now minus startingDeadlineSeconds.
func nextRuns(acj *appsv1alpha1.AdvancedCronJob, sched cron.Schedule, lastScheduled *time.Time, now time.Time) (missed, next time.Time, err error) {
	earliest := acj.CreationTimestamp.Time
	if lastScheduled != nil {
		earliest = *lastScheduled
	}
	if d := acj.Spec.StartingDeadlineSeconds; d != nil {
		if limit := now.Add(-time.Duration(*d) * time.Second); limit.After(earliest) {
			earliest = limit
		}
	}
	if earliest.After(now) {
		return time.Time{}, sched.Next(now), nil
	}
	n := 0
	for t := sched.Next(earliest); !t.After(now); t = sched.Next(t) {
		missed = t
		if n++; n > maxMissedRuns {
			return time.Time{}, time.Time{}, fmt.Errorf("more than %d missed runs: set or lower spec.startingDeadlineSeconds, or check the clocks", maxMissedRuns)
		}
	}
	return missed, sched.Next(now), nil
}
