import ArgumentParser
import Crypto
import CryptoExtras
@main struct M { static func main() {} }
