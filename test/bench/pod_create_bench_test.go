package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// BenchmarkRawPodCreate measures the physical limit later controller benchmarks are quoted
// against: pods per second that one client with no rate limit can create in this control plane.
func BenchmarkRawPodCreate(b *testing.B) {
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, -1 // no client-side rate limit
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "raw-", Labels: map[string]string{"app": "bench"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example/bench:1"}}},
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			b.Fatalf("create pod %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "pods/s")
	fmt.Printf("baseline: raw pod create, 1 client, no rate limit: %d pods in %v = %.0f pods/s\n", b.N, elapsed.Round(time.Millisecond), rate)
}
