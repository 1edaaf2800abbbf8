package server

import dto "github.com/prometheus/client_model/go"

// gather reads the server's metrics in-process, where a call to /metrics could not get through
// (its connection over a cap).
func gather(s *Server) ([]*dto.MetricFamily, error) { return s.metrics.registry.Gather() }
