package containerrecreaterequest

// userAgent is how a request names itself among the holders of a pod's KruisePodReady
// condition (podcondition.Holder); its key is the request's namespace/name.
const userAgent = "ContainerRecreateRequest"
