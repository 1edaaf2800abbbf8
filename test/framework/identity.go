package framework

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// AliasTagSuffix ends an image tag that names the same image, with the same image ID, as the tag
// without it ("web:2-alias" and "web:2"), as two tags of one digest do on a real node.
const AliasTagSuffix = "-alias"

// imageID is what a runtime reports for an image: the repository without the tag, and a
// digest. The digest of a reference without one is the sha256 of the reference itself, so the
// same image always gets the same id and a new tag a new one, except a tag ending in
// AliasTagSuffix, which names the image of the tag without it.
func imageID(image string) string {
	if at := strings.Index(image, "@"); at >= 0 {
		return imageRepository(image[:at]) + image[at:]
	}
	sum := sha256.Sum256([]byte(strings.TrimSuffix(image, AliasTagSuffix)))
	return imageRepository(image) + "@sha256:" + hex.EncodeToString(sum[:])
}

// imageRepository drops the tag of a reference; a colon before the last slash belongs to a
// registry port, not a tag.
func imageRepository(ref string) string {
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		return ref[:colon]
	}
	return ref
}

// containerID names one run of one container, as <runtime>://<64 hex>. Each restart gets a new
// id, and the same run always the same one, so a repeated sync writes nothing new.
func containerID(runtime string, pod types.UID, container string, restartCount int32) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d", pod, container, restartCount)))
	return runtime + "://" + hex.EncodeToString(sum[:])
}

// runtimeName is the scheme of a node's containerRuntimeVersion ("containerd://1.7.13").
func runtimeName(containerRuntimeVersion string) string {
	if name, _, ok := strings.Cut(containerRuntimeVersion, "://"); ok && name != "" {
		return name
	}
	return "containerd"
}

// Address ranges of simulated nodes and pods. They stay clear of the service range the
// control plane uses (10.0.0.0/24).
const (
	nodeIPBase = 0xAC100000 // 172.16.0.0/12
	podIPBase  = 0x0A400000 // 10.64.0.0/10
	podIPSpan  = 1 << 22
)

// nodeIP returns the address of the i-th node of a simulator.
func nodeIP(i int) string {
	return uint32ToIP(nodeIPBase + 1 + uint32(i))
}

// ipAllocator hands out pod addresses, one per pod UID, unique among the live pods of one
// simulator, and takes them back when pods go.
type ipAllocator struct {
	mu    sync.Mutex
	next  uint32
	byUID map[types.UID]string
	inUse map[string]types.UID
}

func newIPAllocator() *ipAllocator {
	return &ipAllocator{byUID: map[types.UID]string{}, inUse: map[string]types.UID{}}
}

// get returns the pod's address, allocating one the first time.
func (a *ipAllocator) get(uid types.UID) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.byUID[uid]; ok {
		return ip
	}
	for range podIPSpan {
		a.next = (a.next + 1) % podIPSpan
		if low := a.next & 0xFF; low == 0 || low == 0xFF {
			continue
		}
		ip := uint32ToIP(podIPBase + a.next)
		if _, taken := a.inUse[ip]; !taken {
			a.byUID[uid], a.inUse[ip] = ip, uid
			return ip
		}
	}
	return "" // four million live pods: not a test this simulator serves
}

// claim records an address a pod already has, so that no other pod gets it.
func (a *ipAllocator) claim(uid types.UID, ip string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.byUID[uid]; ok {
		return
	}
	a.byUID[uid], a.inUse[ip] = ip, uid
}

// release frees the pod's address.
func (a *ipAllocator) release(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.byUID[uid]; ok {
		delete(a.byUID, uid)
		if a.inUse[ip] == uid {
			delete(a.inUse, ip)
		}
	}
}

func uint32ToIP(v uint32) string {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, v)
	return net.IP(b).String()
}
