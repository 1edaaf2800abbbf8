package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	if v, err := os.ReadFile("/etc/image-version"); err == nil {
		fmt.Printf("version %s", v)
	}
	if e := os.Getenv("SAMPLE_ENV"); e != "" {
		fmt.Println("SAMPLE_ENV", e)
	}
	<-sig
}
