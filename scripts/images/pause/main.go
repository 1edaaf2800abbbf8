package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// `exists <file>` answers an exec probe: exit 0 when the file is there, 1 (saying why) when
	// not. With no arguments, as the sandbox and the sample workload run, it blocks.
	if len(os.Args) == 3 && os.Args[1] == "exists" {
		if _, err := os.Stat(os.Args[2]); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		return
	}
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
