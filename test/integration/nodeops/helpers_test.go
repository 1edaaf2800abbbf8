package nodeops

import (
	"time"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// quiet is how long a paused AdvancedCronJob is watched for a run it must not start.
const quiet = 3 * time.Second

const kruisePodReady = appspub.KruisePodReadyConditionType
