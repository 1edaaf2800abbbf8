package inplaceupdate

import appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"

func stateWith(container, imageID string) *appspub.InPlaceUpdateState {
	return &appspub.InPlaceUpdateState{LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{container: {ImageID: imageID}}}
}
