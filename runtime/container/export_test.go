package container

// WriteDockerContext stores a docker context under a configuration
// directory, as `docker context create` does (see writeContext).
var WriteDockerContext = writeContext
