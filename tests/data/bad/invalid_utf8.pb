
aÿþ!Relu