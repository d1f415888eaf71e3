// replaced by the device tape
